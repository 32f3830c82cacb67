#pragma once
// Whether this test binary is built with AddressSanitizer or ThreadSanitizer (GCC says so
// with __SANITIZE_*__, clang with __has_feature): tests that measure memory or drive tens
// of thousands of sockets or calls are Release-only, since the sanitizers make both
// meaningless or many times slower.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SLOSERVE_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SLOSERVE_TEST_SANITIZED 1
#endif
#endif
#ifndef SLOSERVE_TEST_SANITIZED
#define SLOSERVE_TEST_SANITIZED 0
#endif
