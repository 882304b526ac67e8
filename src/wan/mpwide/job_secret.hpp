// wan/mpwide/job_secret.hpp — the job's credentials for a program that cannot be changed.
//
// An MPWide program has no place for a secret, so the drop-in finds it itself: the
// MULTILANE_SECRET variable, or else the first line of ~/.config/multilane/secret, a file only
// its owner may read (any permission bit for group or others refuses it: another user could
// take the secret and join the job). MULTILANE_JOB_ID (default 0) names the job.
#pragma once

#include "multilane/channels.hpp"

namespace multilane::wan::mpwide {

// Throws UsageError saying exactly what to set when there is no usable secret.
channels::Credentials find_credentials();

}  // namespace multilane::wan::mpwide
