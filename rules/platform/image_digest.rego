# ADR 0022 ("images par digest"): platform components run images pinned by digest, so what
# runs is what was mirrored and reviewed, whatever happens to the tag.
package gitops_lint.rules.platform.image_digest

import rego.v1

meta := {
	"id": "platform/image-digest",
	"summary": "a platform component's container image is not pinned by digest",
	"severity": "error",
	"applies_to": ["k8s.Object"],
	# Only documents in files matching these globs are checked (option `paths` overrides).
	"paths": ["platform/**"],
}

# Pod spec of the workload kinds, and where it is.
pod_spec_path = ["spec"] if input.kind == "Pod"

pod_spec_path = ["spec", "template", "spec"] if input.kind in {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"}

pod_spec_path = ["spec", "jobTemplate", "spec", "template", "spec"] if input.kind == "CronJob"

deny contains result if {
	some field in ["initContainers", "containers", "ephemeralContainers"]
	some i, container in object.get(input, array.concat(pod_spec_path, [field]), [])
	image := object.get(container, "image", "")
	is_string(image)
	not contains(image, "@sha256:")
	result := {
		"msg": sprintf("container `%s` runs image `%s`, which is not pinned by digest", [object.get(container, "name", ""), image]),
		"path": array.concat(pod_spec_path, [field, i, "image"]),
		"help": "Pin the image by digest (`image@sha256:…`, after mirroring it to the internal registry).",
	}
}
