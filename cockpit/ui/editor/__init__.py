"""The editor pane (SESSION.md, autosaved, changes on disk noticed), its Markdown highlighting
without tree-sitter (a line scanner and the map TextArea draws from), and the guard that keeps
stray typing from firing the single-letter keys. Nothing is imported here."""
