"""Renderers for CheckpointReports: markdown, HTML, plot, email text, Slack payload, validation checklist."""
