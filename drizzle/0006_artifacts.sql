CREATE TABLE `artifact_sightings` (
	`id` text PRIMARY KEY NOT NULL,
	`sha256` text NOT NULL,
	`node_id` text NOT NULL,
	`pot_id` text,
	`source` text,
	`session` text,
	`url` text,
	`filename` text,
	`truncated` integer NOT NULL,
	`seen_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `artifact_sightings_sha256` ON `artifact_sightings` (`sha256`);--> statement-breakpoint
CREATE INDEX `artifact_sightings_session` ON `artifact_sightings` (`session`);--> statement-breakpoint
CREATE TABLE `artifacts` (
	`sha256` text PRIMARY KEY NOT NULL,
	`size` integer NOT NULL,
	`mime` text,
	`ext` text,
	`stored` integer NOT NULL,
	`first_seen` integer NOT NULL,
	`last_seen` integer NOT NULL
);
