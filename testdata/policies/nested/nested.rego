package main.extra

import rego.v1

warn contains "checked by package main.extra" if input.kind == "Service"
