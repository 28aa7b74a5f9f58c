"""The agentgym adapter of the retail domain: scenario, reveal, reads, list builders, generator."""
