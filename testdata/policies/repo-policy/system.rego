package gitops.repo.system

import rego.v1

# Evaluated once, with the repository model (data.gitops) as input.
deny contains result if {
	some app in input.applications
	app.destination.namespace == "kube-system"
	result := {
		"msg": sprintf("Application %s deploys into kube-system", [app.name]),
		"file": app.document.file,
		"document": app.document.document,
		"path": array.concat(app.spec_path, ["destination", "namespace"]),
	}
}
