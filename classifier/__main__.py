"""`python -m classifier` and the `classifier` command.

Signals are made safe first, before the command's modules are imported (about a
second): see classifier._signals.
"""

from classifier._signals import catch_early


def entry() -> None:
    catch_early()
    from classifier.cli import entry as run

    run()


if __name__ == "__main__":
    entry()
