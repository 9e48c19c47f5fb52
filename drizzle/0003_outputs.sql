CREATE TABLE `alert_rules` (
	`name` text PRIMARY KEY NOT NULL,
	`definition` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `outputs` (
	`name` text PRIMARY KEY NOT NULL,
	`type` text NOT NULL,
	`definition` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `reader_positions` (
	`reader` text PRIMARY KEY NOT NULL,
	`position` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `rule_seen` (
	`rule` text NOT NULL,
	`value` text NOT NULL,
	PRIMARY KEY(`rule`, `value`)
);
