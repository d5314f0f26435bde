# Applications do not use the `default` AppProject.
package gitops_lint.rules.argocd.no_default_project

import rego.v1

meta := {
	"id": "argocd/no-default-project",
	"summary": "an Application uses the `default` AppProject, which allows every source and destination",
	"severity": "error",
	"applies_to": ["argocd.Application", "argocd.ApplicationSet"],
}

spec_path = ["spec"] if input.kind == "Application"

spec_path = ["spec", "template", "spec"] if input.kind == "ApplicationSet"

spec := object.get(input, spec_path, {})

name := object.get(input, ["metadata", "name"], "")

# Who uses the project: the Application, or the Applications an ApplicationSet generates.
uses := sprintf("Application `%s` uses", [name]) if input.kind == "Application"

uses := sprintf("ApplicationSet `%s` generates Applications that use", [name]) if input.kind == "ApplicationSet"

names := sprintf("Application `%s` names", [name]) if input.kind == "Application"

names := sprintf("ApplicationSet `%s` generates Applications that name", [name]) if input.kind == "ApplicationSet"

deny contains result if {
	spec.project == "default"
	result := {
		"msg": sprintf("%s the `default` AppProject", [uses]),
		"path": array.concat(spec_path, ["project"]),
		"help": "Create an AppProject that bounds the sources and destinations of this team, and name it in `project`.",
	}
}

deny contains result if {
	is_object(spec)
	not spec.project
	result := {
		"msg": sprintf("%s no `project`, so Argo CD uses `default`", [names]),
		"path": spec_path,
		"help": "Set `project` to an AppProject that bounds the sources and destinations of this team.",
	}
}
