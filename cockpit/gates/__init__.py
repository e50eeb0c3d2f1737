"""Gates: the engine that runs each check as a child process, and the gates themselves."""
