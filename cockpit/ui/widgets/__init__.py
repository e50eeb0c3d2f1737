"""The panels that draw: header, phases, GPU, gates (the list, the pane, a run's result), the
status history, the tune panel, the key bar, and the line-by-line widget most of them are drawn
with. They render what they are given and make no session move. Nothing is imported here."""
