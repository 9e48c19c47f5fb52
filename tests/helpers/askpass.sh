#!/bin/sh
# OpenSSH's SSH_ASKPASS program for the tests: answers each prompt with the password the
# test put in TEST_SSH_PASSWORD (see tests/helpers/clients.ts).
printf '%s\n' "$TEST_SSH_PASSWORD"
