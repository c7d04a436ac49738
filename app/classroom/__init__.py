"""Classroom add-ons installed through the main window's extension points: predict-then-reveal, presentation mode, exports, link calibration."""
