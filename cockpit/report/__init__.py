"""The end-of-session report (Markdown, HTML, JSON, an SVG chart) and the history of sessions."""
