// The scalar types an engine source instantiates its templates for. The engine proper holds float (its
// speed matters, so it is built once per CPU level); the tests' finite-difference checks need double,
// which the build compiles once, at the baseline level, into a library of their own (docs/design.md
// §8). A build without those definitions (no CPU dispatch) instantiates both in one place.
#pragma once

#if defined(NDR_SCALARS_FLOAT) && defined(NDR_SCALARS_DOUBLE)
#error "define at most one of NDR_SCALARS_FLOAT and NDR_SCALARS_DOUBLE"
#endif

// X(float) and/or X(double): apply an instantiation macro to the scalars of this build.
#if defined(NDR_SCALARS_FLOAT)
#define NDR_FOR_EACH_SCALAR(X) X(float)
#elif defined(NDR_SCALARS_DOUBLE)
#define NDR_FOR_EACH_SCALAR(X) X(double)
#else
#define NDR_FOR_EACH_SCALAR(X) X(float) X(double)
#endif
