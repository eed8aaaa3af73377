// Compile-time stub of android.app.Service. Never shipped.
// https://developer.android.com/reference/android/app/Service
package android.app;

public abstract class Service extends android.content.ContextWrapper {}
