// Compile-time stub of android.content.ContextWrapper. Never shipped.
// https://developer.android.com/reference/android/content/ContextWrapper
package android.content;

public abstract class ContextWrapper extends Context {}
