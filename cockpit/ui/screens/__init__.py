"""What fills the terminal: the main screen and the ones pushed over it (help, History, the
pattern browser, the small dialogs), with the table of keys they bind. Nothing is imported here:
a screen loads when it is first shown."""
