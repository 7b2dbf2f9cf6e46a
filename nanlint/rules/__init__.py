"""One module per rule; :func:`nanlint.rules.base.all_rules` discovers them."""
