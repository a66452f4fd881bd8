-- Cairn store schema, version 5 (PostgreSQL): what a question for a person was asked with (encoded),
-- so the inbox (API, CLI, dashboard) shows it beside the question.
ALTER TABLE human_requests ADD COLUMN context TEXT;
