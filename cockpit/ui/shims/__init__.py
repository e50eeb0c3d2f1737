"""Where the cockpit works around Textual and the terminal: the crash screen without locals,
toasts that are never markup, SSH hangup and SIGTERM, a key reader that sleeps while no key comes,
Textual's caches emptied once a minute. Each imports nothing else of the UI. Nothing is imported here."""
