"""One module per rule; :func:`nanlint.rule.all_rules` discovers them."""
