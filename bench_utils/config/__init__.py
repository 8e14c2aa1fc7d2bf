"""What to measure: the configuration (its defaults and allowed values), its validation, parameters
files and the model registry. No torch."""
