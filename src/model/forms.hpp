// model/forms.hpp — the closed forms, one function per (collective, algorithm); model.cpp
// dispatches to them. Each returns seconds, or throws UsageError when the platform is outside
// what the form describes (e.g. a site-unaware algorithm on several sites).
#pragma once

#include <span>
#include <string_view>

#include "model/figures.hpp"
#include "multilane/algorithms.hpp"
#include "multilane/errors.hpp"
#include "multilane/platform.hpp"

namespace multilane::model {

using Form = double (*)(const Figures&, const Platform&, const BuildParams&);

struct FormEntry {
  Collective collective;
  std::string_view algorithm;
  Form form;
};

// Every closed form (bcast_forms.cpp, block_forms.cpp, hier_forms.cpp, reduce_forms.cpp).
std::span<const FormEntry> bcast_forms();
std::span<const FormEntry> reduce_forms();
std::span<const FormEntry> block_forms();
std::span<const FormEntry> hier_forms();

// Throws UsageError "... has no closed form on several sites" unless f has one site.
void require_one_site(const Figures& f, Collective c, std::string_view algorithm);

}  // namespace multilane::model
