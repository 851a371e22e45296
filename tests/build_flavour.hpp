// What kind of build a test runs in, so the slowest probes can shrink in
// unoptimised and sanitizer builds (CI runs every suite under ASan+UBSan too)
// instead of timing out there.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define TIMERSIM_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define TIMERSIM_SANITIZED 1
#endif
#endif
#ifndef TIMERSIM_SANITIZED
#define TIMERSIM_SANITIZED 0
#endif
#if defined(__OPTIMIZE__)
#define TIMERSIM_OPTIMIZED 1
#else
#define TIMERSIM_OPTIMIZED 0
#endif
