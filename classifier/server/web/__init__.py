"""The side port's room: the admin server and the operator console."""
