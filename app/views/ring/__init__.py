"""The ring view: the devices round the switch, the blocks in flight, its layout function."""
