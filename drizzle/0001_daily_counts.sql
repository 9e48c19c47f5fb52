CREATE TABLE `event_counts_daily` (
	`kind` text NOT NULL,
	`day` integer NOT NULL,
	`key` text NOT NULL,
	`count` integer NOT NULL,
	PRIMARY KEY(`kind`, `day`, `key`)
);
