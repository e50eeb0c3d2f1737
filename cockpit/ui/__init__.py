"""The Textual UI: renders session state and sends intents to the core. Never imports torch."""
