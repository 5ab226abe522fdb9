"""What the model reads of the notebook: cells, outputs, variables and images."""
