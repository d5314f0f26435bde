package p

import rego.v1

allow if input.user == "admin"
