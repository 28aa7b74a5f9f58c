"""The agentgym adapter of the airline domain: scenario, reveal, reads, list builders, generator."""
