# ADR-0014: deleting an app must clean up what it deployed, so Applications carry
# the `resources-finalizer.argocd.argoproj.io` finalizer (cascading deletion).
#
# An ApplicationSet's generated Applications get the finalizer from the ApplicationSet
# controller (`RenderTemplateParams` in argo-cd's applicationset/utils/utils.go): it is added
# when the template lists no finalizers, unless `spec.syncPolicy.preserveResourcesOnDeletion`
# is true. A template that lists finalizers keeps exactly those.
package gitops_lint.rules.argocd.resources_finalizer

import rego.v1

meta := {
	"id": "argocd/resources-finalizer",
	"summary": "an Application lacks the `resources-finalizer.argocd.argoproj.io` finalizer, so deleting it leaves its resources running",
	"severity": "warning",
	"applies_to": ["argocd.Application", "argocd.ApplicationSet"],
}

finalizer := "resources-finalizer.argocd.argoproj.io"

help := sprintf("Add `%s` under `finalizers`, so deleting the Application deletes what it deployed.", [finalizer])

metadata_path := ["metadata"] if input.kind == "Application"

metadata_path := ["spec", "template", "metadata"] if input.kind == "ApplicationSet"

metadata := object.get(input, metadata_path, {})

finalizers := object.get(metadata, "finalizers", [])

listed if {
	is_array(finalizers)
	count(finalizers) > 0
}

has_finalizer if {
	some f in finalizers
	is_string(f)
	startswith(f, finalizer)
}

preserves_resources if object.get(input, ["spec", "syncPolicy", "preserveResourcesOnDeletion"], false) == true

# A `templatePatch` (a Go template) that sets finalizers decides what generated Applications get.
patches_finalizers if contains(object.get(input, ["spec", "templatePatch"], ""), "finalizers")

# Written Applications, and templates that list their own finalizers.
deny contains result if {
	input.kind == "Application"
	not has_finalizer
	result := {
		"msg": sprintf("Application `%s` has no `%s` finalizer", [object.get(metadata, "name", ""), finalizer]),
		"path": location,
		"help": help,
	}
}

deny contains result if {
	input.kind == "ApplicationSet"
	listed
	not has_finalizer
	not patches_finalizers
	result := {
		"msg": sprintf("ApplicationSet `%s` generates Applications without the `%s` finalizer: the template's `finalizers` replace it", [object.get(input, ["metadata", "name"], ""), finalizer]),
		"path": array.concat(metadata_path, ["finalizers"]),
		"help": help,
	}
}

# No finalizers in the template: the controller adds it, unless told to preserve resources.
deny contains result if {
	input.kind == "ApplicationSet"
	not listed
	preserves_resources
	not patches_finalizers
	result := {
		"msg": sprintf("ApplicationSet `%s` generates Applications without the `%s` finalizer: `preserveResourcesOnDeletion: true`", [object.get(input, ["metadata", "name"], ""), finalizer]),
		"path": ["spec", "syncPolicy", "preserveResourcesOnDeletion"],
		"help": sprintf("Remove `preserveResourcesOnDeletion: true`, or list `%s` under the template's `finalizers`.", [finalizer]),
	}
}

# Point at `finalizers` when the list exists, else at `metadata`.
location := array.concat(metadata_path, ["finalizers"]) if {
	object.get(metadata, "finalizers", null) != null
} else := metadata_path
