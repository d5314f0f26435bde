package main

import rego.v1

# Each definition of `deny` has an id of its own from its `# METADATA` annotation.

# METADATA
# title: Deployments run as non-root
# custom:
#   id: team/run-as-non-root
deny contains msg if {
	input.kind == "Deployment"
	not input.spec.template.spec.securityContext.runAsNonRoot
	msg := sprintf("Deployment %s must set runAsNonRoot", [input.metadata.name])
}

# METADATA
# custom:
#   id: team/no-latest
deny contains msg if {
	some c in input.spec.template.spec.containers
	endswith(c.image, ":latest")
	msg := sprintf("container %s uses a `latest` tag", [c.name])
}

# Without an annotation: `policy/main/deny`.
deny contains msg if {
	input.kind == "Service"
	input.spec.type == "LoadBalancer"
	msg := sprintf("Service %s is exposed through a load balancer", [input.metadata.name])
}

# METADATA
# title: replicas
# scope: document
warn_replicas contains "too many replicas" if {
	input.spec.replicas > 3
}

warn_replicas contains "replicas on a Deployment without a securityContext" if {
	input.spec.replicas > 3
	not input.spec.template.spec.securityContext
}
