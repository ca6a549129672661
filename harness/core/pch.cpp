// The translation unit that compiles the modules' shared precompiled header (CMakeLists.txt,
// KVBENCH_PCH); it defines nothing.
