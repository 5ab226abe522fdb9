"""The record: transcripts, a saved notebook read, saved turns and settings, replay's."""
