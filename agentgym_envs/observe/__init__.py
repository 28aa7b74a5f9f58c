"""What a run leaves behind: OpenTelemetry spans while it runs (:mod:`.tracing`, off by default)
and the rollout store it is kept in (:mod:`.store`, read by ``agentgym runs``)."""
