"""The vocabulary: events, content, conversation, schema; sink, prompter, interrupts."""
