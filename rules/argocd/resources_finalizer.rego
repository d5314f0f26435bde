# ADR-0014: deleting an app must clean up what it deployed, so Applications carry
# the `resources-finalizer.argocd.argoproj.io` finalizer (cascading deletion).
package gitops_lint.rules.argocd.resources_finalizer

import rego.v1

meta := {
	"id": "argocd/resources-finalizer",
	"summary": "an Application lacks the `resources-finalizer.argocd.argoproj.io` finalizer, so deleting it leaves its resources running",
	"severity": "warning",
	"applies_to": ["argocd.Application", "argocd.ApplicationSet"],
}

finalizer := "resources-finalizer.argocd.argoproj.io"

metadata_path = ["metadata"] if input.kind == "Application"

metadata_path = ["spec", "template", "metadata"] if input.kind == "ApplicationSet"

metadata := object.get(input, metadata_path, {})

has_finalizer if {
	some f in object.get(metadata, "finalizers", [])
	startswith(f, finalizer)
}

deny contains result if {
	not has_finalizer
	result := {
		"msg": sprintf("Application %q has no `%s` finalizer (ADR-0014)", [object.get(metadata, "name", ""), finalizer]),
		"path": location,
		"help": sprintf("Add `%s` under `finalizers`, so deleting the Application deletes what it deployed.", [finalizer]),
	}
}

# Point at `finalizers` when the list exists, else at `metadata`.
location := array.concat(metadata_path, ["finalizers"]) if {
	object.get(metadata, "finalizers", null) != null
} else := metadata_path
