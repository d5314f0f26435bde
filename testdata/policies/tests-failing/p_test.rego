package p_test

import rego.v1

import data.p

test_admin_allowed if {
	p.allow with input as {"user": "admin"}
}

test_guest_allowed_fails if {
	p.allow with input as {"user": "guest"}
}
