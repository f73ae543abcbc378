"""The gRPC port's room: what a call meets between the wire and the engine.

`app` binds the server on its parts (`ServerParts`: its limits, the lanes and their
pushback, the explanations, made and closed by one owner) and stops it gracefully;
`service` is the servicer, `convert` and `wire_errors` the wire's shapes and refusals;
`lanes`, `executor`, `reaper` and `lane_interceptor` give each kind of call capacity of
its own; `pushback` holds back connections told to wait;
`observing_interceptor` measures every call; `tls` the port's credentials.
"""
