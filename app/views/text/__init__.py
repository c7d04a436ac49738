"""The text panels: the step's explanation and the formula beside the simulation."""
