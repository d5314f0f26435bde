package other

import rego.v1

deny contains "checked by package other" if input.kind == "Service"
