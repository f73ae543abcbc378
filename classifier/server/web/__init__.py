"""The side port's room (`--metrics-addr`): HTTP beside the gRPC port.

`admin` is the server and its route table (metrics, probes, reload, the live Unknowns);
`console` the operator console's WSGI application, `queries` what its pages read, `pages`
how they are made from the Jinja2 templates in `templates/`; `routes` the one router and
reply both tables use.
"""
