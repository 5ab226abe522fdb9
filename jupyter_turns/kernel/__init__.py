"""The kernel glue: %%chat and %chat, cells, threads, recorder, keys, trust, replay."""
