"""The telecom (dual-control) domain of tau2-bench as an agentgym scenario."""
