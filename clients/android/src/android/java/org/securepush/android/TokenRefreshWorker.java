package org.securepush.android;

import android.content.Context;
import androidx.work.Worker;
import androidx.work.WorkerParameters;
import org.securepush.client.DeviceRegistration;
import org.securepush.client.SecurePushException;

/** Hands FCM's new token to the server with the device credential alone (no user token needed). */
public final class TokenRefreshWorker extends Worker {
    static final String TOKEN = "securepush.token";

    public TokenRefreshWorker(Context context, WorkerParameters parameters) {
        super(context, parameters);
    }

    @Override
    public Result doWork() {
        String token = getInputData().getString(TOKEN);
        if (token == null) return Result.failure();
        try {
            SecurePushAndroid.client(getApplicationContext()).updatePushToken(DeviceRegistration.fcm(token));
            return Result.success();
        } catch (SecurePushException e) {
            return e.isTransient() ? Result.retry() : Result.failure();
        }
    }
}
