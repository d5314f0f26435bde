package main

import rego.v1

warn contains msg if {
	input.kind == "Service"
	input.spec.type == "LoadBalancer"
	msg := sprintf("Service %s is exposed through a load balancer", [input.metadata.name])
}

violation contains {"msg": "too many replicas", "id": "team/replicas", "path": ["spec", "replicas"]} if {
	input.spec.replicas > 3
}
