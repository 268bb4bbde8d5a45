"""Storm over Olympus: an event-sourced game service."""
