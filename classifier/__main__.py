"""`python -m classifier` and the `classifier` command.

Signals are made safe first, before the command runs and imports what it runs on (the
server stack takes about a second): see classifier._signals; and gRPC's fork handlers are
turned off before gRPC is imported: see classifier._fork.
"""

from classifier._fork import grpc_fork_handlers_off
from classifier._signals import catch_early


def entry() -> None:
    catch_early()
    grpc_fork_handlers_off()
    from classifier.cli import entry as run

    run()


if __name__ == "__main__":
    entry()
