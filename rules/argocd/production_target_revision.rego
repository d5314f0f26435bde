# Production must not follow a moving branch tip: an Application deploying to a production
# destination pins `targetRevision` (a tag or a commit), never `HEAD` (the default when unset).
#
# Reads the repository model `data.gitops` (scope "repo"), so Applications written in an
# ApplicationSet template are checked too; with the reachability model, so are the ones
# ApplicationSets generate.
package gitops_lint.rules.argocd.production_target_revision

import rego.v1

meta := {
	"id": "argocd/production-target-revision",
	"summary": "an Application deploying to production follows `HEAD` instead of a pinned revision",
	"severity": "error",
	"scope": "repo",
	"options": [{
		"name": "production_pattern",
		"kind": "string",
		"doc": "regular expression matched against the destination namespace, name and server (default `(^|[-_./])prod(uction)?($|[-_./])`)",
	}],
}

default pattern := `(^|[-_./])prod(uction)?($|[-_./])`

pattern := data.gitops_lint.options[meta.id].production_pattern

production(app) if {
	some field in ["namespace", "name", "server"]
	value := app.destination[field]
	is_string(value)
	regex.match(pattern, value)
}

moving(rev) if rev == null

moving(rev) if {
	is_string(rev)
	upper(trim_space(rev)) == "HEAD"
}

moving(rev) if rev == ""

deny contains result if {
	some app in data.gitops.applications
	some src in app.sources
	moving(src.targetRevision)
	production(app)
	result := {
		"msg": sprintf("Application `%s` deploys to production (`%s`) from %s", [
			app.name,
			destination_text(app),
			revision_text(src.targetRevision),
		]),
		"file": app.document.file,
		"document": app.document.document,
		"path": revision_path(src),
		"help": "Pin `targetRevision` to a release tag or a commit for production destinations.",
	}
}

revision_path(src) := array.concat(src.spec_path, ["targetRevision"]) if src.targetRevision != null

else := src.spec_path

revision_text(rev) := "`HEAD` (no `targetRevision`)" if rev == null

else := sprintf("`targetRevision: %s`", [rev])

destination_text(app) := concat("/", [v |
	some field in ["server", "name", "namespace"]
	v := app.destination[field]
	is_string(v)
])
