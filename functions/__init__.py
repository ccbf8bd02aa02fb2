"""The Lambda handlers: one thin module each (parse → one service call → response)."""
