"""The cockpit frozen for a picture: `cockpit screenshot`, the busy main screen of `screenshots/`,
and the fixed clock and recorded GPU the snapshot tests set up. Above the app: they build one.
Nothing is imported here."""
